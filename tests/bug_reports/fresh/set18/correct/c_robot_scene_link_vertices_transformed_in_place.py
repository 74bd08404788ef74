"""Each link's rows are read as a copy (`.clone()`) before they are transformed, so the write into
the shared tensor leaves the matmul's saved input intact.
Source: https://github.com/lbr-stack/roboreg/issues/81."""
import torch

torch.manual_seed(0)

LINK_SIZES = {"link_1": 5, "link_2": 4, "link_3": 6}


class MeshContainer:
    def __init__(self):
        total = sum(LINK_SIZES.values())
        self.rest_vertices = torch.cat([torch.randn(1, total, 3), torch.ones(1, total, 1)], dim=-1)
        self.rows, start = {}, 0
        for name, size in LINK_SIZES.items():
            self.rows[name] = (start, start + size)
            start += size
        self.vertices = self.rest_vertices.clone()

    def get_mesh_vertices(self, name):
        lower, upper = self.rows[name]
        return self.vertices[:, lower:upper].clone()

    def set_mesh_vertices(self, name, vertices):
        lower, upper = self.rows[name]
        self.vertices[:, lower:upper] = vertices

    def transform_mesh(self, pose, name):
        self.set_mesh_vertices(name, self.get_mesh_vertices(name) @ pose.transpose(-1, -2))


def rotation_about_z(angle, offset):
    cos, sin, zero, one = torch.cos(angle), torch.sin(angle), torch.zeros_like(angle), torch.ones_like(angle)
    return torch.stack([
        torch.stack([cos, -sin, zero, offset * one]),
        torch.stack([sin, cos, zero, zero]),
        torch.stack([zero, zero, one, zero]),
        torch.stack([zero, zero, zero, one]),
    ])


def forward_kinematics(joint_angles):
    poses, pose = {}, torch.eye(4)
    for index, name in enumerate(LINK_SIZES):
        pose = pose @ rotation_about_z(joint_angles[index], 0.5)
        poses[name] = pose
    return poses


def configure_robot_joint_states(meshes, joint_angles):
    meshes.vertices = meshes.rest_vertices.clone()
    for name, pose in forward_kinematics(joint_angles).items():
        meshes.transform_mesh(pose, name)


meshes = MeshContainer()
true_angles = torch.tensor([0.3, -0.4, 0.2])
configure_robot_joint_states(meshes, true_angles)
observed = meshes.vertices[..., :3].clone()

joint_angles = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.Adam([joint_angles], lr=0.05)
losses = []
for step in range(5):
    optimizer.zero_grad()
    configure_robot_joint_states(meshes, joint_angles)
    loss = (meshes.vertices[..., :3] - observed).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "joint_angles": joint_angles.detach().clone()}
