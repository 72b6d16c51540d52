"""endstate: evaluate coding agents by the end state they leave in a sandbox."""

__version__ = "0.1.0"
__all__ = ["__version__"]
