"""Play: races and games, their rules as pure state machines and the requests on them."""
