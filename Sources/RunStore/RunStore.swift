// The RunStore module; see DEVELOPERS.md layout.
