// The Wire module; see DEVELOPERS.md layout.
