"""Contact from Python: the model's collision geometry and ground in Model.info(), contact files,
and the dense reference contact step (batchdyn.dense_contact_step)."""
import json

import numpy as np
import pytest

import batchdyn


def test_the_shipped_quadruped_lists_its_collision_geometry_and_ground(models_dir):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    contacts = model.info()["contacts"]
    assert contacts["ground"] == {"height": 0.0, "normal": [0.0, 0.0, 1.0]}
    assert len(contacts["geometries"]) == 5 and len(contacts["candidates"]) == 12


def test_a_contact_file_replaces_the_geometry_and_a_bad_one_names_the_entry(models_dir, tmp_path):
    feet = tmp_path / "feet.json"
    feet.write_text(json.dumps({"file_collisions": False, "friction": 0.7,
                                "geometries": [{"name": "FL", "link": "FL_FOOT", "sphere": {"radius": 0.02}}]}))
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free", contacts=feet)
    assert [g["friction"] for g in model.info()["contacts"]["geometries"]] == [0.7]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"geometries": [{"name": "FL", "link": "FL_PAW", "sphere": {"radius": 0.02}}]}))
    with pytest.raises(batchdyn.Error, match="on link 'FL_PAW': the model has no such link"):
        batchdyn.load(f"{models_dir}/quadruped.urdf", root="free", contacts=bad)


def test_the_quadruped_dropped_on_its_feet_lands_and_the_forces_hold_it(models_dir):
    model = batchdyn.load(f"{models_dir}/quadruped.urdf", root="free")
    q = model.neutral()
    q[2] = 0.53  # straight legs: the feet 1 cm above the plane
    v, tau = np.zeros(model.nv), np.zeros(model.nv)
    for _ in range(100):  # 45 ms of free fall, then on the feet
        out = batchdyn.dense_contact_step(model, q, v, tau, 1e-3)
        assert out["converged"]
        q, v = out["q"], out["v"]
    assert out["forces"].shape == (len(out["active"]), 3) and len(out["active"]) == 4
    assert np.all(out["forces"][:, 2] >= 0) and out["forces"][:, 2].sum() > 0  # the ground pushes, never pulls
    assert min(out["gaps"]) > -1e-3
    # The straight knees (0 rad) lie above their upper limit (-0.9): the limit rows push them back.
    assert {side for _, side, _, _ in out["limits"]} == {"upper"}
    assert all(impulse >= 0 for *_, impulse in out["limits"])
    with pytest.raises(batchdyn.Error, match="h must be finite and > 0"):
        batchdyn.dense_contact_step(model, q, v, tau, 0.0)
