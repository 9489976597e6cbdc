"""The method: one ledger, the classifier, token counts and the checks every agent's figures pass."""
