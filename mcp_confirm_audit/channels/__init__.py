"""How the person answers on a channel of their own: a command the harness runs, or an HTTP call to the server's approval endpoint."""
