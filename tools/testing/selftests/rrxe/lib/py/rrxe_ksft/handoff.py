"""Hand-offs between a program and its test through files: the
program publishes what the test needs (shell assignments, a list),
the test creates a file when it is the program's turn again; or the
program asks the test to inject packets (`Injector`)."""
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


class Injector:
    """Packets the test injects on the program's request (`atk_serve` in
    lib/attack.sh): each request is one line of `roce-flood --mode
    sequence` arguments, written to DIR/inject.N (N = 1, 2, ...); the
    test builds the packets, sends them from the peer's namespace, and
    creates DIR/injected.N."""

    def __init__(self, directory):
        self.dir = directory
        self.n = 0

    def inject(self, args, timeout=120):
        """Has the packets `args` describe sent; returns once they are."""
        self.n += 1
        publish(f"{self.dir}/inject.{self.n}", args + "\n")
        wait_for_file(f"{self.dir}/injected.{self.n}", timeout, 0.02)
