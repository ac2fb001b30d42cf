// The Broadcaster module; see DEVELOPERS.md layout.
