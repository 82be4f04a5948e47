"""The code base itself: layers, package indexes, typing, the bench and conformance tools."""
