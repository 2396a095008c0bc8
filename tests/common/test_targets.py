import pytest

from common.targets import outputs_of, split_targets, target_of

CFG = {"targets": {"section5": ["table5_direction", "figure3_rho"], "nmt": ["table4_nmt"]}}
OUTPUTS = ["table1_tatoeba", "table5_direction", "figure3_rho", "table4_nmt", "claims"]


def test_each_output_is_written_by_one_target():
    assert split_targets(CFG) == CFG["targets"] and split_targets({}) == {}
    assert [target_of(CFG, o) for o in OUTPUTS] == ["all", "section5", "section5", "nmt", "all"]
    assert outputs_of(CFG, "all", OUTPUTS) == ["table1_tatoeba", "claims"]
    assert outputs_of(CFG, "section5", OUTPUTS) == ["table5_direction", "figure3_rho"]
    assert outputs_of({}, "all", OUTPUTS) == OUTPUTS


@pytest.mark.parametrize("targets, message", [
    ({"all": ["claims"]}, "'all' is the main target"),
    ({"a": ["table5_direction"], "b": ["table5_direction"]}, "'table5_direction' is in both 'a' and 'b'"),
])
def test_a_target_split_that_cannot_be_built_is_an_error(targets, message):
    with pytest.raises(ValueError, match=message):
        split_targets({"targets": targets})


def test_the_nmt_tables_are_a_target_of_their_own_only_where_the_config_says_so():
    from common.targets import extra_targets, index_target

    own = {"targets": {"section5": ["table5_direction"]}, "nmt": {"own_target": True}}
    assert extra_targets(own) == ["section5", "nmt"]
    assert index_target(own, nmt_report=True) == "nmt" and index_target(own, nmt_report=False) == "all"
    shared = {"nmt": {"recipe": {}}}
    assert extra_targets(shared) == [] and index_target(shared, nmt_report=True) == "all"
    assert extra_targets({}) == [] and index_target({}, nmt_report=True) == "all"  # no NMT at all
    with pytest.raises(ValueError, match="'nmt' is the NMT tables' target"):
        extra_targets({"targets": {"nmt": ["claims"]}, "nmt": {"own_target": True}})
