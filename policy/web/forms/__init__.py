"""The pages' forms: they only validate input; services make the changes."""
