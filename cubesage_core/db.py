"""Database access: resolve the URL (external or embedded), apply schema files, open connections and pools.

Short-lived sync connections serve the CLI and loaders; long-lived components (the API, the answering
service, SAG recall, the vector store) borrow from pools (:func:`pool`, :func:`async_pool`) whose
connections are checked when borrowed, so a connection the server dropped (restart, terminated backend)
is replaced instead of failing the caller; :func:`read` retries a read once on a fresh connection when
the one it used broke mid-call. Every connection has pgvector's types registered.
The API connects as :data:`API_ROLE` (no superuser rights, see :func:`grant_api` and :func:`api_url`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, TypeVar

import psycopg
from pgvector.psycopg import register_vector, register_vector_async
from psycopg import sql
from psycopg.abc import Params
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout

from cubesage_core.settings import Settings, get_settings

SCHEMA_PACKAGE = "cubesage_core.schema"
READER_ROLE = "cubesage_reader"
API_ROLE = "cubesage_api"
POOL_TIMEOUT_S = 10.0  # a caller waits at most this long for a pooled connection (then PoolTimeout: 503)
T = TypeVar("T")
PGVECTOR_STATEMENT = "CREATE EXTENSION vector;"


class DatabaseSetupError(RuntimeError):
    """The database cannot hold cubesage's schemas; the message says what to run or fix."""


class Executor(Protocol):
    def execute(self, query: str | bytes | sql.SQL | sql.Composed, params: Params | None = None, /) -> object: ...


def one(row: T | None) -> T:
    """The row of a query that always returns one (an aggregate, a function call)."""
    if row is None:
        raise RuntimeError("the query returned no row")
    return row


def database_url(settings: Settings | None = None) -> str:
    """The configured database URL, starting the embedded server when none is set."""
    settings = settings or get_settings()
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    from cubesage_core.embedded_pg import EmbeddedPostgres

    return EmbeddedPostgres(settings.pg_data_dir, port=settings.pg_port).start().url()


def connect(url: str, autocommit: bool = True) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=autocommit)
    register_vector(conn)
    return conn


@contextmanager
def connection(url: str) -> Iterator[psycopg.Connection]:
    conn = connect(url)
    try:
        yield conn
    finally:
        conn.close()


def schema_files() -> list[Path]:
    """Numbered DDL files (``NNN_name.sql``), applied in order; each is idempotent."""
    folder = resources.files(SCHEMA_PACKAGE)
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".sql"))


def apply_schema(url: str, schemas: Sequence[str] | None = None) -> None:
    """Create extensions, schemas, tables, indices, the read-only role and its grants on the warehouse
    ``schemas`` (default: ``settings.warehouse_schemas``); idempotent. Raises :class:`DatabaseSetupError`
    when the database is unreachable or pgvector cannot be created."""
    schemas = list(schemas) if schemas is not None else get_settings().warehouse_schemas
    try:
        conn = psycopg.connect(url, autocommit=True)  # no vector type yet on a brand-new database
    except psycopg.OperationalError as err:
        raise DatabaseSetupError(f"cannot connect to PostgreSQL: {str(err).strip()}") from err
    with conn:
        conn.execute("SELECT pg_advisory_lock(4242)")
        try:
            create_extensions(conn)
            for path in schema_files():
                conn.execute(path.read_text())
            grant_reader(conn, schemas)
            grant_api(conn, schemas)
        except psycopg.errors.InsufficientPrivilege as err:
            raise DatabaseSetupError(_privilege_message(err)) from err
        finally:
            conn.execute("SELECT pg_advisory_unlock(4242)")


def _privilege_message(err: psycopg.Error) -> str:
    """What the setup role lacks, and which role can run setup instead."""
    detail = err.diag.message_detail
    return (
        f"setup lacks a privilege: {err.diag.message_primary or err}{f' ({detail})' if detail else ''}. "
        f"Run it with a superuser's URL, or as a role with CREATEROLE that owns the warehouse schemas and "
        f"holds {READER_ROLE} and {API_ROLE} WITH ADMIN OPTION (roles are shared by every database of a "
        "server)"
    )


def create_extensions(conn: Executor) -> None:
    """pgvector and pg_trgm; a missing or forbidden pgvector names the statement a superuser must run."""
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as err:
        raise DatabaseSetupError(
            f"pgvector is not available to this database ({str(err).strip().splitlines()[0]}); install the "
            f"pgvector package on the server, then run as a superuser in this database: {PGVECTOR_STATEMENT}"
        ) from err
    conn.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")


def grant_reader(conn: Executor, schemas: Sequence[str]) -> None:
    """USAGE, SELECT on every table and default SELECT on future tables of each schema, for the reader role
    (schemas are created when missing, so grants made before the data is loaded still apply)."""
    role = sql.Identifier(READER_ROLE)
    for schema in schemas:
        name = sql.Identifier(schema)
        for statement in (
            "CREATE SCHEMA IF NOT EXISTS {schema}",
            "GRANT USAGE ON SCHEMA {schema} TO {role}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}",
            "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT ON TABLES TO {role}",
        ):
            conn.execute(sql.SQL(statement).format(schema=name, role=role))


def bootstrap(settings: Settings | None = None) -> str:
    """The database URL with cubesage's schemas applied: what every command that reads them calls first."""
    settings = settings or get_settings()
    url = database_url(settings)
    apply_schema(url, settings.warehouse_schemas)
    set_api_password(url, settings)
    return url


def set_api_password(admin_url: str, settings: Settings) -> None:
    """When ``api_database_url`` names :data:`API_ROLE` with a password, give the role that password (so a
    deployment configures it in one place, e.g. compose.yaml)."""
    if settings.api_database_url is None:
        return
    params = conninfo_to_dict(settings.api_database_url.get_secret_value())
    if params.get("user") != API_ROLE or not params.get("password"):
        return
    with connection(admin_url) as conn:
        conn.execute(
            sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(API_ROLE), sql.Literal(str(params["password"])))
        )


async def _configure(conn: psycopg.AsyncConnection) -> None:
    await register_vector_async(conn)


class _Sweep:
    """A pool's ``check``: the usual round trip on the borrowed connection; when it fails, every idle
    connection is checked at once (``pool.check()``). After a server restart or terminated backends a
    borrower then meets one dead connection, not each in turn with psycopg_pool's growing back-off
    (1 s, 2 s, 4 s ...) between them."""

    def __init__(self) -> None:
        self.pool: ConnectionPool | None = None

    def __call__(self, conn: psycopg.Connection) -> None:
        try:
            ConnectionPool.check_connection(conn)
        except Exception:
            if self.pool is not None:
                self.pool.check()
            raise


class _AsyncSweep:
    """:class:`_Sweep` for async pools."""

    def __init__(self) -> None:
        self.pool: AsyncConnectionPool | None = None

    async def __call__(self, conn: psycopg.AsyncConnection) -> None:
        try:
            await AsyncConnectionPool.check_connection(conn)
        except Exception:
            if self.pool is not None:
                await self.pool.check()
            raise


def pool(
    url: str,
    *,
    min_size: int = 1,
    max_size: int = 4,
    name: str = "cubesage",
    kwargs: dict[str, Any] | None = None,
    vector: bool = True,
) -> ConnectionPool:
    """An open sync pool of autocommit connections (pgvector registered unless ``vector`` is false), each
    checked when borrowed (:class:`_Sweep`); lost connections are replaced in the background."""
    sweep = _Sweep()
    connections = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        open=True,
        name=name,
        configure=register_vector if vector else None,
        check=sweep,
        timeout=POOL_TIMEOUT_S,
        reconnect_timeout=60,
        kwargs={"autocommit": True, **(kwargs or {})},
    )
    sweep.pool = connections
    return connections


def async_pool(
    url: str,
    min_size: int = 1,
    max_size: int = 16,
    *,
    name: str = "cubesage-async",
    configure: Callable[[psycopg.AsyncConnection], Awaitable[None]] | None = None,
) -> AsyncConnectionPool:
    """An (unopened) async pool, connections checked when borrowed (:class:`_AsyncSweep`), pgvector
    registered, then ``configure``; open it with ``await pool.open()``."""

    async def setup(conn: psycopg.AsyncConnection) -> None:
        await _configure(conn)
        if configure is not None:
            await configure(conn)

    sweep = _AsyncSweep()
    connections = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        configure=setup,
        open=False,
        name=name,
        check=sweep,
        timeout=POOL_TIMEOUT_S,
        reconnect_timeout=60,
        kwargs={"autocommit": True},
    )
    sweep.pool = connections
    return connections


def read(connections: ConnectionPool, work: Callable[[psycopg.Connection], T]) -> T:
    """``work`` on a borrowed connection; once more on a fresh one when the connection broke mid-call
    (the server dropped it). Only for reads: a write may have happened before the connection broke."""
    for attempt in (1, 2):
        borrowed: psycopg.Connection | None = None
        try:
            with connections.connection() as conn:
                borrowed = conn
                return work(conn)
        except PoolTimeout:
            raise
        except psycopg.OperationalError:
            if attempt == 2 or borrowed is None or not borrowed.broken:
                raise
    raise AssertionError("unreachable")


async def aread(connections: AsyncConnectionPool, work: Callable[[psycopg.AsyncConnection], Awaitable[T]]) -> T:
    """:func:`read` for async pools."""
    for attempt in (1, 2):
        borrowed: psycopg.AsyncConnection | None = None
        try:
            async with connections.connection() as conn:
                borrowed = conn
                return await work(conn)
        except PoolTimeout:
            raise
        except psycopg.OperationalError:
            if attempt == 2 or borrowed is None or not borrowed.broken:
                raise
    raise AssertionError("unreachable")


# -- the API's role -----------------------------------------------------------------------------------


def grant_api(conn: Executor, schemas: Sequence[str]) -> None:
    """The API's login role: no superuser, role or database rights; reads and writes cubesage's own
    schemas (``semlayer``, ``sag``), reads API keys and updates only their ``last_used_at``, and reads the
    warehouse ``schemas`` as a member of the reader role (which generated SQL runs under)."""
    api, reader = sql.Identifier(API_ROLE), sql.Identifier(READER_ROLE)
    conn.execute(sql.SQL("GRANT {reader} TO {api}").format(reader=reader, api=api))
    for schema in ("semlayer", "sag"):
        name = sql.Identifier(schema)
        for statement in (
            "GRANT USAGE ON SCHEMA {schema} TO {api}",
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {api}",
            "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {api}",
            "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {api}",
            "ALTER DEFAULT PRIVILEGES IN SCHEMA {schema} GRANT USAGE, SELECT ON SEQUENCES TO {api}",
        ):
            conn.execute(sql.SQL(statement).format(schema=name, api=api))
    conn.execute(sql.SQL("REVOKE INSERT, UPDATE, DELETE ON semlayer.api_key FROM {api}").format(api=api))
    conn.execute(sql.SQL("GRANT UPDATE (last_used_at) ON semlayer.api_key TO {api}").format(api=api))
    for schema in schemas:
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {schema} TO {api}").format(schema=sql.Identifier(schema), api=api))


def with_user(url: str, user: str) -> str:
    """``url`` (URL or key=value conninfo) for another role: same server and database, no password."""
    params = conninfo_to_dict(url)
    params.pop("password", None)
    params["user"] = user
    return make_conninfo("", **params)


def api_url(settings: Settings, admin_url: str) -> str:
    """The URL the API connects with: ``settings.api_database_url``, else ``admin_url`` as :data:`API_ROLE`
    without a password (the embedded server trusts loopback). Raises :class:`DatabaseSetupError` when that
    role cannot connect or is a superuser."""
    configured = settings.api_database_url
    url = configured.get_secret_value() if configured is not None else with_user(admin_url, API_ROLE)
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            row = conn.execute(
                "SELECT current_user, rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
    except psycopg.OperationalError as err:
        raise DatabaseSetupError(
            f"the API cannot connect as its role ({str(err).strip().splitlines()[0]}); give the role "
            f"{API_ROLE} a password and set CUBESAGE_API_DATABASE_URL (see the README's database roles)"
        ) from err
    if row is None or row[1] or row[2]:
        raise DatabaseSetupError(
            f"the API must not connect as a superuser or a role that bypasses row security "
            f"({row[0] if row else '?'}); use the role {API_ROLE} "
            "(CUBESAGE_API_DATABASE_URL)"
        )
    return url
