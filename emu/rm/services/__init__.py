"""The RM's services: protocol requests in, events through the dispatcher,
replies out. One class per YARN service, each in its own module:
`resource_tracker` (ResourceTrackerService), `application_master`
(ApplicationMasterService), `client_rm` (ClientRMService) and `admin`
(AdminService); `RMServices` routes each request to the service that
serves it and keeps the counts.

Each request is handled to completion synchronously: decode has already
validated its shape; the handler raises events, the dispatcher drains them,
and the reply reflects everything that followed. Nothing here touches a
transport: `emu.rm.actor` feeds requests in and carries replies out.
"""

from emu.rm.services.router import RMServices

__all__ = ["RMServices"]
