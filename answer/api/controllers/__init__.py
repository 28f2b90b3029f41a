"""HTTP controllers, one module per concept."""
