"""schemux's code generator: upstream contracts -> schemas/tools -> generated/.

Run it as ``python -m codegen`` from the repository root (``--check`` to only verify).
"""
