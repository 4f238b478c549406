"""`python -m killpoint` runs the `killpoint` command line."""

from killpoint.harness.cli import main

if __name__ == "__main__":
    main()
