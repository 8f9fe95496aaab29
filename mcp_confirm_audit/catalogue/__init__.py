"""The attack catalogue's loader, its docs, and the generators and checks its entries use (hostile names, characters, question checks)."""
