"""The frontend: a kernel's Python AST -> tile IR (contract 1).

`builder` imports MLIR; `source` and `signature` do not, so the JIT can compute cache keys
and read an eager kernel's signature on a machine without the compiler.
"""
