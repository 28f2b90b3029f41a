"""One BLAS thread for a serving process.

OpenBLAS worker threads spin-wait for about a tenth of a second after every call. In a server that
embeds a question and scores vectors per request, that spinning takes the core the next request (or
PostgreSQL) needs: on 2 cores a mixed question cost 109 ms of CPU with two BLAS threads and 28 ms
with one. Batch indexing keeps the library default.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

SERVING_THREADS = 1


def limit_blas_threads(threads: int = SERVING_THREADS) -> None:
    """Cap the BLAS libraries numpy has loaded at ``threads`` for the rest of the process."""
    threadpool_limits(limits=threads, user_api="blas")
