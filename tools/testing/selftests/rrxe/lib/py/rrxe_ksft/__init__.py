"""Helpers for the rrxe selftests' pyverbs programs (progs/*.py), in one
package: lib.sh puts its parent directory on PYTHONPATH, and a program
imports what it needs from a module (from rrxe_ksft.verbs import ...)."""
