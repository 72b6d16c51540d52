import subprocess


def test_greeting():
    out = subprocess.run(["bash", "/app/greet.sh", "Ada"], capture_output=True, text=True, check=True).stdout
    assert out == "Hello, Ada!\n"
