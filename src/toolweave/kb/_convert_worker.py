"""markitdown in a worker process, so a conversion past its deadline can be killed.

A 198 KB .docx of two million paragraphs keeps markitdown busy for minutes, and a thread cannot
be stopped. One long-lived process (spawned, never forked from a threaded host) imports
markitdown once and converts one file per request; when a conversion runs past its time limit,
or produces more Markdown than allowed, the process is killed and the next conversion starts a
fresh one. Its start-up (the markitdown import) is not counted in any file's time limit.
"""

from __future__ import annotations

import atexit
import multiprocessing
import threading
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

from toolweave.kb.errors import DocumentError

STARTUP_TIMEOUT = 120.0
"""Seconds the worker may take to start and import markitdown."""


def _serve(conn: Connection) -> None:
    """The worker's loop: (path, max_chars) in; ("ok", markdown, title) or ("error", why) out."""
    try:
        from markitdown import MarkItDown
    except ImportError:
        conn.send(("missing", ""))
        return
    converter = MarkItDown(enable_plugins=False)
    conn.send(("ready", ""))
    while True:
        try:
            path, max_chars = conn.recv()
        except EOFError:
            return
        try:
            result = converter.convert(path)
        except Exception as exc:
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
            continue
        markdown = str(result.markdown or "")
        if len(markdown) > max_chars:
            conn.send(("too_long", str(len(markdown))))
        else:
            conn.send(("ok", markdown, getattr(result, "title", None)))


class ConversionWorker:
    """The one worker process; `convert` is thread-safe (one conversion at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None

    def convert(self, file: Path, timeout: float, max_chars: int) -> tuple[str, str | None]:
        with self._lock:
            conn = self._started(file)
            conn.send((str(file), max_chars))
            if not conn.poll(timeout):
                self.stop()
                raise DocumentError(
                    f"{file}: refused: converting it took longer than {timeout:g} s "
                    "(convert_timeout) and was stopped; split the document or raise "
                    "convert_timeout"
                )
            try:
                reply = conn.recv()
            except EOFError:
                self.stop()
                raise DocumentError(
                    f"{file}: conversion failed: the converter process died (out of memory?); "
                    "check the file opens in its own application"
                ) from None
        if reply[0] == "too_long":
            raise DocumentError(
                f"{file}: refused: it converts to {reply[1]} characters of Markdown, over "
                f"max_markdown_chars ({max_chars}); split the document"
            )
        if reply[0] == "error":
            raise DocumentError(
                f"{file}: conversion failed ({reply[1]}); check the file opens in its own "
                "application"
            )
        return reply[1], reply[2]

    def _started(self, file: Path) -> Connection:
        if self._conn is not None and self._process is not None and self._process.is_alive():
            return self._conn
        self.stop()
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs,), daemon=True, name="kb-convert")
        process.start()
        theirs.close()
        self._process, self._conn = process, ours
        if not ours.poll(STARTUP_TIMEOUT):
            self.stop()
            raise DocumentError(f"{file}: the converter process did not start")
        try:
            state, _ = ours.recv()
        except EOFError:
            state = "died"
        if state != "ready":
            self.stop()
            raise DocumentError(
                f"{file}: converting {file.suffix} files needs markitdown; "
                "install it with: pip install 'toolweave[kb]'"
            )
        return ours

    def stop(self) -> None:
        """Kill the worker (if any); the next conversion starts a new one."""
        process, conn = self._process, self._conn
        self._process = self._conn = None
        if conn is not None:
            conn.close()
        if process is not None and process.is_alive():
            process.kill()
            process.join()


WORKER = ConversionWorker()
atexit.register(WORKER.stop)
