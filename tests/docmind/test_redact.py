"""Server paths never reach members: failure reasons and traces lose them, ordinary text keeps its slashes."""
import pytest

from docmind.redact import without_paths


@pytest.mark.parametrize("text,expected", [
    ("FileNotFoundError: [Errno 2] No such file or directory: '/srv/docmind/data/media/uploads/a b.pdf'",
     "FileNotFoundError: [Errno 2] No such file or directory: '<server path>'"),
    ("cannot open the vector store at /work/wt/data/milvus.db: locked",
     "cannot open the vector store at <server path>: locked"),
    ("see file:///var/lib/docmind/x.txt", "see <server path>"),
    ("C extension at /usr/lib/python3/dist-packages/foo.so failed", "C extension at <server path> failed"),
])
def test_paths_are_hidden(text, expected):
    assert without_paths(text) == expected


@pytest.mark.parametrize("text", ["1/2 of the documents", "text/plain is unsupported", "https://example.com/a/b",
                                  "and/or", "a ratio 3/4/5", "the PDF is encrypted", "~/notes/a.txt", "/tmp"])
def test_ordinary_text_is_kept(text):
    assert without_paths(text) == text
