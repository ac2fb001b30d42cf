// The MoonRunnerClient module; see DEVELOPERS.md layout.
