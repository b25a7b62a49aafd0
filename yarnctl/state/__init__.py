"""The one store of ResourceManager state that the simulator and the live bridge both drive (depends on model only)."""

from yarnctl.state.store import ClusterState, StateError, snapshot_of

__all__ = ["ClusterState", "StateError", "snapshot_of"]
