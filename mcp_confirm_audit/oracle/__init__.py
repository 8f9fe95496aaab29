"""How an effect is seen: the sandbox tree and its scanner, and one module per other kind of effect."""
