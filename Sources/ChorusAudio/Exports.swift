// The engine speaks the timeline format the service and its clients use.
@_exported public import ChorusWire
