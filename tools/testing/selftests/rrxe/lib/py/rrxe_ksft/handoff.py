"""Hand-offs between a program and its test through files: the
program publishes what the test needs (shell assignments, a list),
the test creates a file when it is the program's turn again."""
import os
import time


def publish(path, text):
    """Writes `text` to `path` at once (into path.tmp, then renamed): the
    test waits for the file to be non-empty and reads it whole."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def wait_for_file(path, timeout, interval):
    """Waits until `path` exists, checking every `interval` seconds;
    fails after `timeout` seconds."""
    end = time.time() + timeout
    while not os.path.exists(path):
        assert time.time() < end, f"no {path} within {timeout} s"
        time.sleep(interval)
