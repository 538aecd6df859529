"""PyIceberg SQL catalogs (SQLite) that tests write tables into, and the settings that give a node
the same catalog through Iceberg's JDBC catalog."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Optional


def sqlite_catalog(name: str, root: Path, warehouse: Optional[str] = None, **properties):
    """PyIceberg's SQL catalog ``name`` in ``root/<name>.db`` over ``warehouse`` (default
    ``file://root/warehouse``), with namespace ``db``; answers the catalog and its SQLite file."""
    from pyiceberg.catalog.sql import SqlCatalog

    db = root / f"{name}.db"
    catalog = SqlCatalog(
        name, uri=f"sqlite:///{db}", warehouse=warehouse or f"file://{root / 'warehouse'}", **properties
    )
    catalog.create_namespace("db")
    return catalog, db


def node_env(name: str, db: Path, warehouse: str) -> Dict[str, str]:
    """The environment that configures a node's catalog ``name`` as the JDBC catalog over the same
    SQLite file and warehouse."""
    prefix = f"FLOE_CATALOG__{name.upper()}__"
    return {prefix + "TYPE": "jdbc", prefix + "URI": f"jdbc:sqlite:{db}", prefix + "WAREHOUSE": warehouse}

