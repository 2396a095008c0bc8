"""DAP's Figure 1 measures (papers/dap/evaluators.py) on points worked out by hand."""
import numpy as np
import pytest

from papers.dap.evaluators import centroid_gap, other_language_nearest_pct, pca_2d


def test_the_nearest_other_token_by_cosine():
    # cosines: a0-a1 .994, a0-e1 .970, a1-e1 .990, e0-e1 .243, e0-a1 .110, e0-a0 0
    # nearest: a0 -> a1, a1 -> a0, e0 -> e1 (all their own language), e1 -> a1 (the other): 1 of 4
    states = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.8, 0.2]])
    assert other_language_nearest_pct(states, np.array([False, False, True, True])) == 25.0


def test_the_centroid_gap_in_the_plane():
    # centres (1, 0) and (1, 2), 2 apart; every point 1 from its own centre
    xy = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    assert centroid_gap(xy, np.array([False, False, True, True])) == pytest.approx(2.0)


def test_pca_projects_on_the_widest_axes_with_a_fixed_sign():
    # centred: (-1, -.25, 0), (0, -.25, 0), (3, -.25, 0), (-2, .75, 0); x carries the variance (14 against .75)
    points = np.array([[-1.0, 0.0, 5.0], [0.0, 0.0, 5.0], [3.0, 0.0, 5.0], [-2.0, 1.0, 5.0]])
    xy = pca_2d(points)
    assert xy.shape == (4, 2)
    assert xy[:, 0] == pytest.approx([-1.0, 0.0, 3.0, -2.0], abs=0.1)  # the largest coordinate (3) positive
    assert np.abs(xy[:, 0]).argmax() == 2 and xy[2, 0] > 0 and xy[np.abs(xy[:, 1]).argmax(), 1] > 0
    assert pca_2d(-points) == pytest.approx(xy)  # a mirrored cloud gives the same plot
