"""markitdown in a worker process, so a conversion past its bounds can be stopped.

A 198 KB .docx of two million paragraphs keeps markitdown busy for minutes, a 143 KB one drove
it to 1.4 GB, and a thread can be neither stopped nor bounded. One long-lived process (spawned,
never forked from a threaded host) imports markitdown once and converts one file per request,
under an address-space limit (`RLIMIT_DATA`, `max_convert_memory`) set once its imports are
done. When a conversion runs past its time limit the process is killed; when it runs out of
memory it reports that and exits; either way the next conversion starts a fresh one. Its
start-up (the markitdown import) is not counted in any file's time limit.

Only plain values cross the pipe: the title is made a plain `str` (markitdown's HTML title is a
BeautifulSoup string that drags its whole parse tree into the pickle). Nothing in the worker
writes to stderr: library warnings and log records are silenced, and every failure comes back
as one line for the caller to report. A PDF whose text comes out with its words glued together
(pdfplumber's spacing on some typeset PDFs) is extracted again with pdfminer's layout analysis.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import re
import sys
import threading
import warnings
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from toolweave.kb.errors import DocumentError

STARTUP_TIMEOUT = 120.0
"""Seconds the worker may take to start and import markitdown."""
_LATIN_RUN = re.compile(r"[A-Za-z]+")
_GLUED_RUN = 25
"""Letters in a row past which a Latin "word" is taken for words without spaces between them."""
_GLUED_SHARE = 0.1
"""Share of a text's letters in such runs past which the text counts as glued."""


def words_glued(text: str) -> bool:
    """True when many of the Latin letters of `text` sit in runs too long to be words
    ("Thisisversion0.21oftheShared..."); CJK text, which has no spaces, never counts."""
    runs = [len(m) for m in _LATIN_RUN.findall(text)]
    letters = sum(runs)
    return letters > 0 and sum(n for n in runs if n > _GLUED_RUN) > _GLUED_SHARE * letters


def _limit_memory(max_bytes: int) -> None:
    try:
        import resource
    except ImportError:  # not a POSIX system: the time limit still applies
        return
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = max_bytes if hard == resource.RLIM_INFINITY else min(max_bytes, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))


def _pdf_text(path: str) -> str:
    from pdfminer.high_level import extract_text
    from pdfminer.layout import LAParams

    return str(extract_text(path, laparams=LAParams()))


def _convert_one(converter: Any, path: str, max_chars: int) -> tuple[str | None, ...]:
    result = converter.convert(path)
    markdown = str(result.markdown or "")
    if path.lower().endswith(".pdf") and words_glued(markdown):
        markdown = _pdf_text(path)
    if len(markdown) > max_chars:
        return ("too_long", str(len(markdown)))
    title = getattr(result, "title", None)
    return ("ok", markdown, None if title is None else str(title).encode().decode())


def _out_of_memory(exc: BaseException) -> bool:
    """True when `exc` is, or wraps, a MemoryError (markitdown wraps its converters' errors in
    a FileConversionException that names them)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, MemoryError) or " threw MemoryError" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _serve(conn: Connection, max_memory: int) -> None:
    """The worker's loop: (path, max_chars) in; ("ok", markdown, title), ("too_long", chars),
    ("error", why) or ("memory", "") out."""
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    try:
        from markitdown import MarkItDown
    except ImportError:
        conn.send(("missing", ""))
        return
    converter = MarkItDown(enable_plugins=False)
    _limit_memory(max_memory)
    conn.send(("ready", ""))
    while True:
        try:
            path, max_chars = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply = _convert_one(converter, path, max_chars)
        except MemoryError:
            reply = ("memory", "")
        except RecursionError:
            reply = ("error", "the document nests too deeply to convert")
        except Exception as exc:
            why = " ".join(str(exc).split())
            reply = (
                ("memory", "") if _out_of_memory(exc) else ("error", f"{type(exc).__name__}: {why}")
            )
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("memory", ""))
        if reply[0] == "memory":
            sys.exit(0)  # the heap may be left fragmented: the next file gets a fresh process


class ConversionWorker:
    """The one worker process; `convert` is thread-safe (one conversion at a time)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._memory = 0

    def convert(
        self, file: Path, timeout: float, max_chars: int, max_memory: int
    ) -> tuple[str, str | None]:
        with self._lock:
            conn = self._started(file, max_memory)
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
                reply = ("memory", "")  # killed by the kernel: the limit is the likely cause
            if reply[0] == "memory":
                self.stop()
                raise DocumentError(
                    f"{file}: refused: converting it needed more than {max_memory} bytes of "
                    "memory (max_convert_memory) and was stopped; split the document or raise "
                    "max_convert_memory"
                )
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

    def _started(self, file: Path, max_memory: int) -> Connection:
        alive = self._process is not None and self._process.is_alive()
        if self._conn is not None and alive and self._memory == max_memory:
            return self._conn
        self.stop()
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe()
        process = context.Process(
            target=_serve, args=(theirs, max_memory), daemon=True, name="kb-convert"
        )
        process.start()
        theirs.close()
        self._process, self._conn, self._memory = process, ours, max_memory
        if not ours.poll(STARTUP_TIMEOUT):
            self.stop()
            raise DocumentError(f"{file}: the converter process did not start")
        try:
            state, _ = ours.recv()
        except EOFError:
            state = "died"
        if state == "died":
            self.stop()
            raise DocumentError(f"{file}: the converter process died while starting")
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
