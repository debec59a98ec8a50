"""Task families declared in their sim2sim modules (contract/families.py): read as data, the same as imported;
a declaration that is not plain data, or a family declared twice, is refused naming the file."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from contract import families, schema


def test_each_declaration_read_as_data_is_the_one_its_module_holds():
    assert list(schema.FAMILIES) == ["locomotion", "reach", "track", "gym"]
    for name, fam in schema.FAMILIES.items():
        held = importlib.import_module(fam.sim2sim).FAMILY
        assert dataclasses.replace(fam, keys=tuple(dataclasses.replace(k, family="") for k in fam.keys),
                                   sim2sim="") == held, name
        assert all(k.family == name for k in fam.keys) and set(fam.carries) <= {k.name for k in schema.SHARED}


def test_the_keys_of_a_family_are_the_common_ones_its_shared_ones_and_its_own():
    reach = schema.keys_of("reach")
    assert {"format", "robot", "scene_mjb", "fingertip_site"} <= set(reach) and "foot_names" not in reach
    assert "env_id" in schema.keys_of("gym") and "robot" not in schema.keys_of("gym")
    assert set(schema.keys_of("swim")) == {k.name for k in schema.COMMON}
    assert schema.carriers(next(k for k in schema.SHARED if k.name == "robot")) == "locomotion, reach, track"


def _package(root: Path, **modules: str) -> None:
    (root / "deploy").mkdir(parents=True, exist_ok=True)
    (root / "apps").mkdir(exist_ok=True)
    for name, text in modules.items():
        (root / "deploy" / f"{name}.py").write_text(text)


def test_a_declaration_must_be_plain_data_and_a_family_is_declared_once(tmp_path: Path):
    ok = 'from contract.families import Family, Key\nFAMILY = Family(\n    "swim", "a fish" + " swimming",\n' \
         '    keys=(Key("fins", "int", "", "fin count"),), carries=["robot"])\n'
    _package(tmp_path, sim2sim_swim=ok, helper="X = 1\n")
    found = families.discover(tmp_path)
    assert list(found) == ["swim"] and found["swim"].meaning == "a fish swimming"
    assert found["swim"].sim2sim == "deploy.sim2sim_swim" and found["swim"].carries == ("robot",)
    assert found["swim"].keys[0].family == "swim"
    _package(tmp_path, sim2sim_swim2=ok)
    with pytest.raises(ValueError, match="'swim' is declared by deploy.sim2sim_swim and deploy.sim2sim_swim2"):
        families.discover(tmp_path)
    (tmp_path / "deploy" / "sim2sim_swim2.py").write_text('MEANING = "x"\nFAMILY = Family("fly", MEANING)\n')
    with pytest.raises(ValueError, match=r"sim2sim_swim2.py:2: a FAMILY declaration is plain data"):
        families.discover(tmp_path)
