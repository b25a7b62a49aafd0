"""Container usage traces: their CSV format and what can be measured from them (allocation efficiency)."""
