from hpcdoctor.cli import main

raise SystemExit(main())
