"""Pure parsers: text in, plain data out. Each is tested on recorded real output."""
