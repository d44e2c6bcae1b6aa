"""Old option names of the command line: they still work, with a warning naming the new one."""

import pytest

from libtopomap.cli import build_parser


@pytest.mark.parametrize("command", ["bench", "demo"])
def test_fake_hosts_is_the_deprecated_name_of_fake_names(command, capsys):
    parser = build_parser([command])
    extra = ["--topology", "t.topo"]
    args = parser.parse_args([command, *extra, "--fake-names", "job.names"])
    assert args.fake_names == "job.names" and capsys.readouterr().err == ""
    with pytest.warns(DeprecationWarning, match="--fake-hosts is deprecated; use --fake-names"):
        args = parser.parse_args([command, *extra, "--fake-hosts", "old.names"])
    assert args.fake_names == "old.names" and not hasattr(args, "fake_hosts")
    assert "--fake-hosts is deprecated; use --fake-names" in capsys.readouterr().err
    assert parser.parse_args([command, *extra]).fake_names is None


@pytest.mark.parametrize("command, new, old", [("bench", "--fake-names", "--fake-hosts"),
                                               ("demo", "--fake-names", "--fake-hosts"),
                                               ("collective", "--allocation", "--placement")])
def test_help_shows_only_the_new_name(command, new, old, capsys):
    with pytest.raises(SystemExit):
        build_parser([command]).parse_args([command, "--help"])
    out = capsys.readouterr().out
    assert new in out and old not in out
