"""The official MCP Python SDK as an agent of Lens: connects to /mcp with an API token,
lists the tools, asks in a new chat and reads the answer's run. Prints one JSON line
with what it found; the Rust test (tests/it/mcp.rs) checks it.

    python client.py <http://host:port/mcp> <token>
"""

import asyncio
import json
import sys

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main(url: str, token: str) -> None:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            asked = await session.call_tool("ask", {"text": "```python\nprint(6 * 7)\n```"})
            answer = asked.structured_content or json.loads(asked.content[0].text)
            chats = await session.call_tool("list_chats", {})
            listed = chats.structured_content or json.loads(chats.content[0].text)
            print(json.dumps({
                "tools": tools,
                "status": answer["status"],
                "stdout": answer["steps"][0]["stdout"],
                "ending": answer["steps"][0]["ending"],
                "chat_listed": any(c["id"] == answer["chat_id"] for c in listed["chats"]),
            }))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
