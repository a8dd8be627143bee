"""Built-in checks: one module per subsystem. Each gathers facts through the SysRoot and never
judges them. A check module defines NAME, TIMEOUT (seconds) and ``collect(root, ctx)``
returning a dict of top-level fact sections. Site checks in a plugin directory use the same form.
"""
