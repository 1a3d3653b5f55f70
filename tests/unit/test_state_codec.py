"""The tables' msgpack codec: a changelog record that does not decode must not stop recovery."""
from __future__ import annotations


def test_a_changelog_record_that_does_not_decode_reads_as_no_state(caplog):
    import importlib

    from faust.serializers import codecs

    importlib.import_module("ridgescope.pipeline.app")      # registers the codec
    codec = codecs.get_codec("msgpack")
    assert codec.loads(codec.dumps({"judged_through": 7})) == {"judged_through": 7}
    assert codec.loads(b'{"judged_through": 7}') is None      # JSON from an older version
    assert "does not decode" in caplog.text
