"""`python -m harness` runs the `killpoint` command line."""

from harness.cli import main

if __name__ == "__main__":
    main()
