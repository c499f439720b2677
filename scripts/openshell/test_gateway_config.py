"""deploy/openshell/gateway.toml is the gateway's configuration schema version 2: checked by
NVIDIA's own fixture test, shipped in the wheel (`openshell/gateway_config_fixture_test.py`),
run unchanged against Lens's file, and by its Docker fixture's checks with Lens's label."""

from __future__ import annotations

import shutil
import tomllib

from openshell import gateway_config_fixture_test as nvidia

from conftest import ROOT

LENS_FILE = ROOT / "deploy/openshell/gateway.toml"


def test_nvidias_schema_v2_check_passes_on_lenss_file(tmp_path, monkeypatch):
    shutil.copy(LENS_FILE, tmp_path / "docker.toml")
    monkeypatch.setattr(nvidia, "FIXTURE_DIR", tmp_path)
    nvidia.test_e2e_gateway_fixtures_use_schema_v2_scalar_driver("docker.toml", "docker")


def test_the_docker_driver_has_its_canonical_policy_and_lenss_label():
    # NVIDIA's test_docker_e2e_gateway_fixture_uses_canonical_policy_and_label, with
    # Lens's label where theirs has "openshell-e2e".
    config = tomllib.loads(LENS_FILE.read_text(encoding="utf-8"))
    docker = config["openshell"]["drivers"]["docker"]
    assert docker["image_pull_policy"] == "if_not_present"
    assert docker["sandbox_label"] == "lens"
    assert "sandbox_namespace" not in docker


def test_nothing_outside_the_openshell_root():
    # The loader refuses root keys it does not know; Lens's file has only `[openshell]`.
    config = tomllib.loads(LENS_FILE.read_text(encoding="utf-8"))
    assert list(config) == ["openshell"]
    assert set(config["openshell"]) == {"version", "gateway", "drivers"}
    assert set(config["openshell"]["drivers"]) == {"docker"}
