"""``libtopomap ingest`` and ``libtopomap info`` on fabric descriptions."""

import json
import pathlib

import pytest

import libtopomap as ltm
from libtopomap.cli import main

from _helpers import FABRICS

FILES = pathlib.Path(__file__).resolve().parents[1] / "topology_files"
TOPO = FABRICS


def test_ingest_writes_ltm_and_prints_summary(tmp_path, capsys):
    out = tmp_path / "small.ltm"
    assert main(["ingest", str(FILES / "small_fabric.ibnetdiscover"), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "switches      3" in text and "hosts         5 (6 CAs, 1 named by GUID)" in text
    assert "cables        10 (distinct links 7; self-loops dropped 1)" in text
    assert "link speeds   2xNDR: 1, 4x???: 1, 4xHDR: 7, 4xNDR: 1" in text
    assert "excluded      1 (1 SHARP Aggregation Node)" in text
    assert "small_fabric.ibnetdiscover:39: self-loop cable" in text
    t = ltm.load(out)
    assert t.n_vertices == 8 and t.n_links == 7 and t.hosts.size == 5


def test_ingest_options_json(tmp_path, capsys):
    out = tmp_path / "small.json"
    rc = main(["ingest", str(FILES / "small_fabric.ports.txt"), "--format", "ibnetdiscover-ports", "--hostmap",
               str(FILES / "small_fabric.hostmap"), "--slots", "4", "--unknown-capacity", "5", "-o", str(out),
               "--format-out", "json"])
    assert rc == 0
    doc = json.loads(out.read_text())
    t = ltm.load(out)
    assert "nodeE" in t.names and t.total_slots == 20 and 5.0 in t.capacity.tolist()
    assert doc["attrs"]["format"] == "ibnetdiscover-ports"


def test_ingest_slurm_notes_switch_names(tmp_path, capsys):
    out = tmp_path / "s.ltm"
    assert main(["ingest", str(FILES / "small_fabric.topology.conf"), "-o", str(out)]) == 0
    cap = capsys.readouterr()
    assert "hosts         6\n" in cap.out
    assert "do not match the LTM switch rule" in cap.err  # 'spine1', 'leaf1' would read back as hosts


def test_ingest_strict_and_errors(tmp_path, capsys):
    out = tmp_path / "x.ltm"
    assert main(["ingest", str(FILES / "small_fabric.ibnetdiscover"), "--strict", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "small_fabric.ibnetdiscover:39: strict mode: self-loop cable" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["ingest", str(tmp_path / "missing"), "-o", str(out)]) == 1
    ltm_file = tmp_path / "t.ltm"
    ltm.save(ltm_file, ltm.torus([2, 2]))
    assert main(["ingest", str(ltm_file), "-o", str(out)]) == 1
    assert "not a fabric description" in capsys.readouterr().err
    garbage = tmp_path / "g.txt"
    garbage.write_bytes(b"\x00\xff garbage\n")
    assert main(["ingest", str(garbage), "--format", "slurm", "-o", str(out)]) == 1
    with pytest.raises(SystemExit) as e:
        main(["ingest", str(garbage), "--format", "nope", "-o", str(out)])
    assert e.value.code == 2


def test_info_accepts_fabric_files(capsys):
    assert main(["info", str(TOPO / "open-mpi__hwloc__avakas-ib-subnet-fe80.txt"), "--json"]) == 0
    props = json.loads(capsys.readouterr().out)
    assert (props["hosts"], props["switches"], props["links"]) == (281, 25, 425)
    assert main(["info", str(TOPO / "extras/ltaulell__HPC_toolset__X5.topology.conf.txt"), "--json"]) == 0
    props = json.loads(capsys.readouterr().out)
    assert (props["hosts"], props["switches"], props["links"]) == (89, 11, 113)
