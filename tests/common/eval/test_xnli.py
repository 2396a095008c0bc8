from common.eval.xnli import split_by_premise


def test_split_by_premise_never_shares_a_premise():
    premises = [f"p{i // 3}" for i in range(30)]  # 10 premises x 3 hypotheses, as in XNLI dev
    train, test = split_by_premise(premises, 0.667, seed=1)
    assert sorted(train + test) == list(range(30)) and len(train) == 21  # whole groups: 7 of 10 premises
    assert not {premises[i] for i in train} & {premises[i] for i in test}
    assert split_by_premise(premises, 0.667, seed=1) == (train, test)  # deterministic
