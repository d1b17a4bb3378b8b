"""The web layer: worker API, requester API and the built worker page."""
