"""One adapter per agent: each turns what that agent records into ledger events."""
