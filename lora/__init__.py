"""lora package: filled in by its own issue."""
