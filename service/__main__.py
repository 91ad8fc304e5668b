"""``python -m service`` runs the CLI."""

from service.cli import main

if __name__ == "__main__":
    main()
