"""Built-in rules: one module per topic. Rules judge facts; they never gather them."""
