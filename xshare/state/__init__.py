"""The state folder: where xshare keeps its files, and the guards every write and read goes through."""
