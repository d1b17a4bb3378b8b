"""Quality control: screening tasks, gold units, block lists."""
