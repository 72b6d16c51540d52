pytest_plugins = ["todo.render"]


def test_render_module_imports():
    import todo.render  # noqa: F401
