// The Reactor module; see DEVELOPERS.md layout.
