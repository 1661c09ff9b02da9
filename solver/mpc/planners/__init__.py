"""The sampling planners — add a planner here: a module with a `base.Planner` subclass and one line in
`core.registry.PLANNERS`."""
