"""The weekly digest: its data model, its pandas tables and the digest issue."""
